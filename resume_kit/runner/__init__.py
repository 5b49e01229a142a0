"""Running verify commands: one unit, a batch's checkpoints, the hooks' unit check."""
