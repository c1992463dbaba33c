"""Commerce: products, payments and their providers, plans, pricings, subscriptions, transactions, orders."""
