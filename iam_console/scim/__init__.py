"""SCIM 2.0 (RFC 7643, RFC 7644): provisioning an organization's users and groups under /scim/v2
(docs/api.md, "SCIM 2.0"). `schema` describes what is served, `filters` turns a filter into the
lists' query, `mapping` converts between SCIM resources and our users and groups, `provisioning`
holds the services, `api` the routes."""
