"""Invoice mailer worker: takes invoice jobs off Redis and hands the rendered mail to the mailer.

Billing pushes each job (a JSON object) onto `invoices:queue`. The worker moves it onto
`invoices:processing` (the reliable-queue pattern), renders it, pushes the message onto
`mailer:outbound` (the mail relay sends from there), records the invoice number in
`invoices:sent` and removes the job from `invoices:processing`.

    python3 worker.py            # run forever (systemd unit invoice-worker.service)
    python3 worker.py --drain    # work off the backlog, exit when the queue is empty
"""

import json
import os
import sys

import redis

QUEUE = "invoices:queue"
PROCESSING = "invoices:processing"
SENT = "invoices:sent"
DEAD = "invoices:dead"
OUTBOUND = "mailer:outbound"


def connect():
    return redis.Redis.from_url(os.environ.get("INVOICE_REDIS_URL", "redis://redis:6379/0"))


def render(job):
    cents = job["amount_cents"]
    return {
        "invoice": job["invoice"],
        "to": job["email"],
        "subject": f"Your invoice {job['invoice']}",
        "amount": f"{cents // 100}.{cents % 100:02d} {job['currency']}",
    }


def handle(r, raw):
    job = json.loads(raw)
    message = render(job)
    r.rpush(OUTBOUND, json.dumps(message, sort_keys=True))
    r.sadd(SENT, job["invoice"])
    r.lrem(PROCESSING, 1, raw)


def next_job(r, drain):
    if drain:
        return r.lmove(QUEUE, PROCESSING, "RIGHT", "LEFT")
    return r.blmove(QUEUE, PROCESSING, 5, "RIGHT", "LEFT")


def main(argv):
    drain = "--drain" in argv
    r = connect()
    handled = 0
    while True:
        raw = next_job(r, drain)
        if raw is None:
            if drain:
                break
            continue
        handle(r, raw)
        handled += 1
    print(f"handled {handled} jobs")


if __name__ == "__main__":
    main(sys.argv[1:])
