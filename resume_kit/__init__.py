"""resume-kit resumes interrupted coding-agent tasks from a verified progress snapshot."""

__version__ = "0.1.0"
