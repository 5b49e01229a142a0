"""Pure data: the progress model, findings, typed workspace facts."""
