"""The built-in walk-through."""
