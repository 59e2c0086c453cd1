#!/usr/bin/env python3
"""Tally from Python: the rules of docs/clients.md in about 150 lines.

Stubs come from the contract, generated where you run it (Debian:
python3-grpcio, python3-grpc-tools):

    python3 -m grpc_tools.protoc -I proto --python_out=gen --grpc_python_out=gen \\
        proto/counter.proto proto/google/rpc/status.proto proto/google/rpc/error_details.proto
    PYTHONPATH=gen python3 docs/examples/python/counter_example.py \\
        --routers tally-1:50051,tally-2:50051 --ca ca.crt --token-file client.token

It prints one JSON object per step; test/integration/proto-contract.test.ts
runs it against a real cluster and checks every line.
"""
import argparse
import json
import os
import random
import sys
import time
import uuid

import grpc

import counter_pb2
import counter_pb2_grpc
from google.rpc import error_details_pb2, status_pb2

# Codes after which a write's outcome is unknown: it may have applied.
OUTCOME_UNKNOWN = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def details_of(error):
    """(ErrorInfo reason, RetryInfo delay in seconds) from the grpc-status-details-bin trailer; (None, None) without one.

    NOT_APPLIED: the call certainly changed nothing, so even an unkeyed increment
    may be sent again. OUTCOME_UNKNOWN: it may have applied (resend only with its key).
    """
    reason, retry_s = None, None
    for key, value in error.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                if info.domain == "tally.counter.v1":
                    reason = info.reason
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                retry = error_details_pb2.RetryInfo()
                detail.Unpack(retry)
                retry_s = retry.retry_delay.ToTimedelta().total_seconds()
    return reason, retry_s


class Tally:
    """One channel per router; calls take turns and move past routers that fail."""

    def __init__(self, routers, ca=None, token=None, service_config=None):
        options = [("grpc.enable_retries", 1)]
        if service_config is not None:
            # Round-robin over a name's addresses, and gRPC's own retries of reads (never of increments).
            options.append(("grpc.service_config", service_config))
        if ca is not None:
            credentials = grpc.ssl_channel_credentials(root_certificates=ca)
            self.channels = [grpc.secure_channel(router, credentials, options=options) for router in routers]
        else:
            self.channels = [grpc.insecure_channel(router, options=options) for router in routers]
        self.stubs = [counter_pb2_grpc.CounterServiceStub(channel) for channel in self.channels]
        # The token goes in the authorization header of every call; never over plaintext off loopback.
        self.metadata = () if token is None else (("authorization", "Bearer " + token),)
        self.next = 0

    def _turns(self):
        """Every router once, starting with the next one in rotation."""
        start = self.next
        self.next = (self.next + 1) % len(self.stubs)
        return [(start + offset) % len(self.stubs) for offset in range(len(self.stubs))]

    def _reachable(self, index, timeout_s=1.0):
        try:
            grpc.channel_ready_future(self.channels[index]).result(timeout=timeout_s)
            return True
        except grpc.FutureTimeoutError:
            return False

    def increment(self, counter, amount, key=None, deadline_s=5.0):
        """A keyed increment is retried with its key until its deadline; an unkeyed one is sent once."""
        request = counter_pb2.IncrementRequest(counter=counter, amount=amount, idempotency_key=key or b"")
        give_up = time.monotonic() + deadline_s
        attempt = 0
        while True:
            for index in self._turns():
                if key is None and not self._reachable(index):
                    continue  # nothing was sent: moving on cannot count twice
                remaining = give_up - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("deadline passed")
                try:
                    return self.stubs[index].Increment(request, timeout=min(remaining, 2.0), metadata=self.metadata)
                except grpc.RpcError as error:
                    reason, _ = details_of(error)
                    # An unkeyed write is resent only when the router says it applied nothing
                    # (UNAVAILABLE with nothing sent to a node, say); bad input stays an answer.
                    resend_unkeyed = reason == "NOT_APPLIED" and error.code() == grpc.StatusCode.UNAVAILABLE
                    if error.code() not in OUTCOME_UNKNOWN or (key is None and not resend_unkeyed):
                        raise  # an answer (bad input, refused), or an unkeyed write of unknown outcome: never resend
            attempt += 1
            time.sleep(random.uniform(0, min(1.0, 0.1 * 2 ** attempt)))  # full jitter

    def read(self, counter, consistency=counter_pb2.EXACT, deadline_s=5.0):
        """A read changes nothing: each router is asked at most once."""
        request = counter_pb2.ReadRequest(counter=counter, consistency=consistency)
        last = None
        for index in self._turns():
            try:
                return self.stubs[index].Read(request, timeout=deadline_s, metadata=self.metadata)
            except grpc.RpcError as error:
                if error.code() not in OUTCOME_UNKNOWN:
                    raise
                last = error
        raise last

    def serving(self, index):
        """grpc.health.v1 Check with no stubs: an empty request; SERVING is field 1 = 1 (bytes 08 01)."""
        check = self.channels[index].unary_unary(
            "/grpc.health.v1.Health/Check", request_serializer=lambda _: b"", response_deserializer=lambda raw: raw
        )
        return check(None, timeout=2.0) == b"\x08\x01"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--routers", required=True, help="host:port[,host:port...]")
    parser.add_argument("--ca")
    parser.add_argument("--token-file")
    parser.add_argument("--service-config", help="proto/service-config.json")
    parser.add_argument("--counter", default="python:example")
    args = parser.parse_args()
    ca = open(args.ca, "rb").read() if args.ca else None
    token = open(args.token_file).read().strip() if args.token_file else os.environ.get("TALLY_TOKEN")
    service_config = open(args.service_config).read() if args.service_config else None
    tally = Tally(args.routers.split(","), ca=ca, token=token, service_config=service_config)

    def emit(step, **values):
        print(json.dumps({"step": step, **values}), flush=True)

    emit("health", serving=[tally.serving(index) if tally._reachable(index) else False for index in range(len(tally.channels))])
    # One key per logical event (here a fresh one); a retry reuses it, so the event counts once.
    key = uuid.uuid4().bytes
    first = tally.increment(args.counter, 5, key=key)
    again = tally.increment(args.counter, 5, key=key)
    emit("keyed", applied=first.applied, retried_applied=again.applied)
    big = 2**62  # int64 as a Python int: exact, never a float
    tally.increment(args.counter, big, key=uuid.uuid4().bytes)
    tally.increment(args.counter, -big, key=uuid.uuid4().bytes)
    unkeyed = tally.increment(args.counter, 1)
    emit("unkeyed", applied=unkeyed.applied)
    total = tally.read(args.counter)
    emit("read", total=str(total.total), exact=total.exact, is_int=isinstance(total.total, int))
    for name, amount in (("zero", 0), ("empty-name", 1)):
        try:
            tally.increment("" if name == "empty-name" else args.counter, amount, key=uuid.uuid4().bytes)
            emit("bad-input", case=name, code="OK")
        except grpc.RpcError as error:
            emit("bad-input", case=name, code=error.code().name, reason=details_of(error)[0])
    try:
        # Without the token the router refuses on the headers: UNAUTHENTICATED.
        Tally(args.routers.split(",")[-1:], ca=ca, token=None).read(args.counter)
        emit("no-token", code="OK")
    except grpc.RpcError as error:
        emit("no-token", code=error.code().name, reason=details_of(error)[0])


if __name__ == "__main__":
    sys.exit(main())
