"""The brief: build the model from progress, facts and findings; render it to a budget."""
