"""Print the loss curves of training logs (out/*.pt.log.json) as Markdown tables.

Usage:  python3 loss_table.py out/big.pt.log.json [out/draft.pt.log.json ...]
"""
import json
import sys

for path in sys.argv[1:]:
    with open(path) as fh:
        log = json.load(fh)
    print(f"\n{log['size']}: {log['n_params']} parameters, {log['tokens_seen']} tokens seen, "
          f"{log['seconds']:.0f} s\n")
    print("| step | train loss | held-out loss | seconds |")
    print("|---:|---:|---:|---:|")
    curve = log["curve"]
    keep = [c for c in curve if c["step"] % 100 == 0 or c is curve[-1] or c["step"] in (25, 50)]
    for c in keep:
        print(f"| {c['step']} | {c['train_loss']:.3f} | {c['heldout_loss']:.3f} | {c['seconds']:.0f} |")
