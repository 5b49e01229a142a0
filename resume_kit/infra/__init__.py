"""Plumbing every room uses: safe files and locks, git, paths, redaction, tokens, trust, errors."""
