"""Makes tasks of all five skills on a running server and writes each task's JSON to a file.

usage: samples.py BASE_URL TOKEN COUNT OUT_DIR

COUNT tasks per skill, from inputs drawn with a fixed seed: the everyday questions of
bench/relevance for catholic_qa, word pairs for document_search, documents of the starter
corpus for document_fetch, dates of two years for the readings and the saints. Every call must
answer with a task; anything else stops the run.
"""
import datetime
import json
import os
import random
import sys
import urllib.request

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
WORDS = ["grace", "baptism", "mercy", "sin", "prayer", "faith", "hope", "charity", "Eucharist",
         "Mary", "saints", "church", "marriage", "confession", "heaven", "hell", "purgatory",
         "angels", "Easter", "Advent"]
DOCUMENTS = ["cat:baltimore-1", "cat:baltimore-2", "cat:baltimore-3", "cat:trent",
             "bible:dr/GEN", "bible:dr/JHN", "bible:dr/PSA", "bible:dr/ROM"]


def send(base, token, skill, text, number):
    body = {"jsonrpc": "2.0", "id": number, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": f"sample-{skill}-{number}", "role": "user",
        "parts": [{"kind": "text", "text": text}], "metadata": {"skillId": skill}}}}
    request = urllib.request.Request(f"{base}/api/v1/a2a", json.dumps(body).encode(), {
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    answer = json.load(urllib.request.urlopen(request, timeout=60))
    if "result" not in answer:
        sys.exit(f"{skill} {text!r}: {answer.get('error')}")
    return answer["result"]


def inputs(rng):
    """Per skill, a function drawing one input text with `rng` (bench/memory's mixed tasks
    draw from the same)."""
    with open(os.path.join(ROOT, "bench", "relevance", "everyday.json")) as f:
        questions = [q["question"] for q in json.load(f)]
    start = datetime.date(2026, 1, 1)
    return {
        "catholic_qa": lambda: rng.choice(questions),
        "document_search": lambda: f"{rng.choice(WORDS)} {rng.choice(WORDS)}",
        "document_fetch": lambda: rng.choice(DOCUMENTS),
        "liturgical_readings": lambda: (start + datetime.timedelta(days=rng.randrange(730))).isoformat(),
        "saints_of_the_day": lambda: (start + datetime.timedelta(days=rng.randrange(730))).isoformat(),
    }


def main():
    base, token, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    for skill, draw in inputs(random.Random(7)).items():
        os.makedirs(os.path.join(out, skill), exist_ok=True)
        for number in range(count):
            task = send(base, token, skill, draw(), number)
            with open(os.path.join(out, skill, f"{number:04}.json"), "w") as f:
                f.write(json.dumps(task, separators=(",", ":")))
        print(f"{skill}: {count} tasks", file=sys.stderr)


if __name__ == "__main__":
    main()
