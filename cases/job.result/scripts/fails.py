# Exits with an error, as a script with a bug does.
import sys

sys.stderr.write("metric script failed on purpose\n")
sys.exit(3)
