"""The `skillmake` front end's pieces (entry layer): the command line, the usage text, the fast commands."""
