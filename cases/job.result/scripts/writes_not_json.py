# Writes something that is not JSON.
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("-i", required=True)
parser.add_argument("-o", required=True)
args = parser.parse_args()
open(args.o, "w").write("mean=0.5\n")
