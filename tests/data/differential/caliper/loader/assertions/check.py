"""A caliper assert script the loader differential only needs to find: neither loader runs it."""
import pathlib

assert pathlib.Path("out.txt").read_text().strip() == "done"
