"""The audit trail: records, their redaction, export and retention."""
