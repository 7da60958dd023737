"""The harness's figures as one PNG: images/s against threads (rn50-train, loaders alone) and
training throughput as % of synthetic data per loader and model.

    python3 bench/plot.py harness.json [more.json ...] -o docs/bench/harness.png

Several JSON files (parts of one plan) are merged. Made where matplotlib is installed (this
machine; the GPU machine has none): fetch the JSON, plot here.
"""

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    results, env = [], None
    for p in paths:
        with open(p) as f:
            run = json.load(f)
        env = env or run["environment"]
        results += [r for r in run["results"] if "error" not in r]
    return results, env


def sweep_series(results):
    """{loader: [(threads, images/s)]} for rn50-train alone, sorted by threads."""
    series = {}
    for r in results:
        if r["pipeline"] == "rn50-train" and r["mode"] == "alone" and r["loader"] != "synthetic":
            series.setdefault(r["loader"], []).append((r["threads"], r["images_per_s"]))
    return {k: sorted(v) for k, v in sorted(series.items())}


def training_bars(results):
    """[(label, model, % of synthetic)] for the train-<model> rows."""
    synthetic = {r["mode"]: r["images_per_s"] for r in results if r["loader"] == "synthetic"}
    bars = []
    for r in results:
        mode = r["mode"]
        if mode.startswith("train-") and r["loader"] != "synthetic" and mode in synthetic:
            bars.append((f"{r['loader']} ({r['threads']} thr)", mode[len("train-"):],
                         100 * r["images_per_s"] / synthetic[mode]))
    return bars


def plot(results, env, out):
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5))
    for loader, pts in sweep_series(results).items():
        a.plot([t for t, _ in pts], [v for _, v in pts], marker="o", label=loader)
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xlabel("threads (stoker num_threads / DataLoader workers)")
    a.set_ylabel("images/s")
    a.set_title("rn50-train, loader alone")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8)
    bars = training_bars(results)
    models = sorted({m for _, m, _ in bars})
    labels = sorted({lab for lab, _, _ in bars})
    width = 0.8 / max(1, len(models))
    for k, m in enumerate(models):
        vals = {lab: v for lab, mm, v in bars if mm == m}
        xs = [i + k * width for i in range(len(labels))]
        b.bar(xs, [vals.get(lab, 0) for lab in labels], width, label=m)
    b.axhline(100, color="gray", linewidth=0.8)
    b.set_xticks([i + width * (len(models) - 1) / 2 for i in range(len(labels))])
    b.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    b.set_ylabel("% of synthetic-data training throughput")
    b.set_title("training fed by each loader")
    b.legend(fontsize=8)
    fig.suptitle(f"{env.get('gpu', 'CPU only')}, {env['cpus']} CPUs, {env['date']}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    results, env = load(args.json)
    plot(results, env, args.output)
    print(f"{args.output}: {len(results)} measurements")


if __name__ == "__main__":
    main()
