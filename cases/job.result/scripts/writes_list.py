# Writes a JSON list, not an object: harbor returns whatever JSON the file holds.
import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("-i", required=True)
parser.add_argument("-o", required=True)
args = parser.parse_args()
json.dump([1, 0.5, None, "x"], open(args.o, "w"))
