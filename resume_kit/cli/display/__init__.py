"""Progress on stderr while verify commands run: a live Rich display on a terminal, plain lines
otherwise (``common`` decides which), for one unit (``unit``, verify-next) or a batch (``batch``,
run)."""
