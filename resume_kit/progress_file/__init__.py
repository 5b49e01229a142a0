"""progress.yaml and config.yaml: load, validate, migrate, round-trip, patch, save."""
