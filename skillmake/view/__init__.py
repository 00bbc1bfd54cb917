"""Layer 8, view: the review viewer (`skillmake view`: pages served on 127.0.0.1, with feedback) and the static
export. Independent of compare/ (a contract); imports the engine and below."""
