"""The command line: argument parsing (app), output helpers (ui) and one module per command."""
