# Writes back the rewards file exactly as harbor wrote it: {"lines": [each line, unparsed]}.
import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("-i", required=True)
parser.add_argument("-o", required=True)
args = parser.parse_args()
with open(args.i, encoding="utf-8", newline="") as handle:
    raw = handle.read()
with open(args.o, "w", encoding="utf-8") as out:
    json.dump({"lines": raw.split("\n"), "bytes": len(raw.encode("utf-8"))}, out)
