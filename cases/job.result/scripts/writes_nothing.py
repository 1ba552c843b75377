# Exits cleanly without writing the output file.
