"""The bad-input matrix: its rows, by what they build, and the builders they share."""
