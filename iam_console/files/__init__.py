"""Uploaded files: resources, local storage and object storage."""
