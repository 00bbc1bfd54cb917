"""Layer 3, store: the content-addressed objects and the action cache (objects), and the shared remote that
mirrors them (remote). Knows records as schema-validated JSON, nothing of how they were made. Imports core and
spec (the record schemas) only."""
