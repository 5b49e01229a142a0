"""The command declarations (options, help, dispatch), one module per area; cli/app.py
registers them in the order ``--help`` lists them."""
