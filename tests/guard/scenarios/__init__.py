"""Named scenario tests of the phase publication guard (research section E.1-E.14)."""
