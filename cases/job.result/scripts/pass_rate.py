# Several outputs from one script, standard library only: the share of trials with every reward 1,
# how many trials had no rewards, and the trial count (ints stay ints).
import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("-i", required=True)
parser.add_argument("-o", required=True)
args = parser.parse_args()
rewards = [json.loads(line) for line in open(args.i, encoding="utf-8").read().splitlines()]
passed = sum(1 for r in rewards if r and all(v == 1 for v in r.values()))
result = {"pass_rate": passed / len(rewards) if rewards else 0.0, "n_missing": rewards.count(None),
          "n": len(rewards)}
with open(args.o, "w", encoding="utf-8") as out:
    json.dump(result, out)
