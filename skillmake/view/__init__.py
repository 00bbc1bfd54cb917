"""The review viewer: `skillmake view` (pages served on 127.0.0.1, with feedback) and the static export."""
