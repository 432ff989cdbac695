"""How examples/seeds/redis-invoice-queue-recovery/dump.rdb was made (deterministic).

Writes the incident's Redis state as a RESP command stream on stdout: yesterday's 203 sent
invoices, the 7 jobs crashed workers left on `invoices:processing` (3 already mailed, 2
not, a legacy job with `amount` "1.284,50", a truncated JSON job), 43 queued jobs (one
legacy, two enqueued twice) and the 3 mails still waiting on `mailer:outbound`. To rebuild
the snapshot, in a container with Debian's redis-server:

    redis-server --daemonize yes --dir /tmp --dbfilename dump.rdb --save ""
    python3 scripts/make-redis-invoice-snapshot.py | redis-cli --pipe && redis-cli save
"""

import json
import random
import sys

rng = random.Random(20261104)
first = [
    "anna",
    "ben",
    "carla",
    "deniz",
    "emil",
    "fatma",
    "greta",
    "hugo",
    "ines",
    "jonas",
    "karin",
    "lars",
    "mia",
    "nils",
    "olga",
    "paul",
    "rosa",
    "sven",
    "tara",
    "uwe",
]
last = [
    "becker",
    "schulz",
    "yilmaz",
    "novak",
    "meyer",
    "wagner",
    "koch",
    "richter",
    "klein",
    "wolf",
]
doms = ["example.de", "mail.example.com", "firma.example", "example.org"]


def job(n, cents=None):
    given, family = rng.choice(first), rng.choice(last)
    return {
        "invoice": f"INV-2026-{n:06d}",
        "customer_id": rng.randint(10000, 99999),
        "email": f"{given}.{family}@{rng.choice(doms)}",
        "amount_cents": cents if cents is not None else rng.randint(990, 250000),
        "currency": "EUR",
        "enqueued_at": f"2026-11-04T0{rng.randint(1, 5)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}Z",
    }


def raw(j):
    return json.dumps(j, separators=(",", ":"))


def render(j):
    c = j["amount_cents"]
    return json.dumps(
        {
            "invoice": j["invoice"],
            "to": j["email"],
            "subject": f"Your invoice {j['invoice']}",
            "amount": f"{c // 100}.{c % 100:02d} {j['currency']}",
        },
        sort_keys=True,
    )


cmds = []
sent = [f"INV-2026-{n:06d}" for n in range(41730, 41930)]  # yesterday's run, 200 invoices
n = 41930
# orphans (processing list), newest first as LPUSH leaves them: built oldest first
orph_sent = [job(n + i) for i in range(3)]
n += 3
for j in orph_sent:
    sent.append(j["invoice"])
orph_unsent = [job(n + i) for i in range(2)]
n += 2
legacy1 = job(n)
n += 1
legacy1.pop("amount_cents")
legacy1["amount"] = "1.284,50"
legacy1["exporter"] = "billing-v1"
trunc = raw(job(n))[:57]
n += 1
processing = [
    raw(orph_sent[0]),
    raw(legacy1),
    raw(orph_unsent[0]),
    raw(orph_sent[1]),
    trunc,
    raw(orph_sent[2]),
    raw(orph_unsent[1]),
]
# pending queue (consumed from the right: oldest at the right)
pending = []
for _ in range(40):
    pending.append(raw(job(n)))
    n += 1
legacy2 = job(n)
n += 1
legacy2.pop("amount_cents")
legacy2["amount"] = "89,90"
legacy2["exporter"] = "billing-v1"
pending.insert(6, raw(legacy2))
pending.insert(15, pending[11])  # billing retried two enqueues after a timeout
pending.insert(30, pending[25])
outbound = [render(j) for j in orph_sent]  # mailer stopped before it sent these
cmds.append(["SADD", "invoices:sent", *sent])
for r in processing:
    cmds.append(["RPUSH", "invoices:processing", r])
for r in pending:
    cmds.append(["RPUSH", "invoices:queue", r])
for m in outbound:
    cmds.append(["RPUSH", "mailer:outbound", m])


def resp(args):
    out = f"*{len(args)}\r\n"
    for a in args:
        b = a.encode()
        out += f"${len(b)}\r\n{a}\r\n"
    return out


sys.stdout.write("".join(resp(c) for c in cmds))
print(len(sent), len(processing), len(pending), len(outbound), file=sys.stderr)
