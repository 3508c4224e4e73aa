"""The GIL is released while a command runs: another Python thread keeps running meanwhile, and
calls from several threads give what the same calls give one after another."""

import threading
import time

import stepcast

# A search long enough (about a second here) to tell a released GIL from a held one.
SEARCH = dict(workload="llama3-8b", topology="dgx-h100", gpus=64, global_batch=512, refine=0, threads=1)


def test_another_python_thread_runs_while_a_search_runs():
    span = {}

    def search():
        span["start"] = time.perf_counter()
        stepcast.search(**SEARCH)
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=search)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())  # pure Python: runs only while this thread holds the GIL
    worker.join()
    during = [t for t in ticks if span["start"] <= t <= span["end"]]
    duration = span["end"] - span["start"]
    assert duration > 0.2, "the search is too short to tell"
    # Held for the whole call, the GIL would leave one gap as long as the call and no tick in it.
    gaps = [b - a for a, b in zip([span["start"]] + during, during + [span["end"]])]
    assert max(gaps) < duration / 4, f"longest gap {max(gaps):.3f} s of a {duration:.3f} s call"


def test_calls_from_threads_give_what_calls_one_after_another_give():
    kinds = [
        lambda: stepcast.predict(workload="llama2-7b", topology="dgx-a100", gpus=8, plan="fsdp=8", global_batch=64),
        lambda: stepcast.search(workload="llama2-7b", topology="p4d-24xlarge", nodes=1, global_batch=16, refine=1),
        lambda: stepcast.collective(op="all-reduce", size="1 GiB", topology="dgx-h100", nodes=2),
    ]
    alone = [call() for call in kinds]
    together = [None] * len(kinds)

    def run(i):
        together[i] = kinds[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(kinds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert together == alone
