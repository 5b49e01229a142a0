"""Readers of the workspace: git, logs, artifacts, test caches, agent transcripts, and the
snapshot that assembles and stores them."""
