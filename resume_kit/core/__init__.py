"""Pure functions: reconcile facts with claims, batch scheduling, inert text."""
