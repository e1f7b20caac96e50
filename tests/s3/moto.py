#!/usr/bin/env python3
"""A moto S3 server for the S3 tests, with authentication on.

    python3 tests/s3/moto.py [--auth]

Starts moto on 127.0.0.1 and a free port, creates two buckets (sx-data,
sx-ckpt) and one IAM user per role whose policy allows only its own bucket,
with --auth switches authentication on, prints one JSON line
    {"endpoint": "http://127.0.0.1:PORT", "data": {"key": ..., "secret": ...},
     "checkpoint": {...}, "buckets": {"data": "sx-data", "checkpoint": "sx-ckpt"}}
and serves until its standard input closes (the test process exited). Exits
3 with a message on stderr when moto or boto3 is not installed.
"""
import json
import os
import sys
import urllib.request

# This file is named moto.py: keep its folder off the path so `import moto` finds the package.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

try:
    import boto3
    from moto.server import ThreadedMotoServer
except ImportError as e:  # pragma: no cover
    print(f"moto not available: {e}", file=sys.stderr)
    sys.exit(3)

ROLES = {"data": "sx-data", "checkpoint": "sx-ckpt"}


def main():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    kw = dict(endpoint_url=endpoint, region_name="us-east-1",
              aws_access_key_id="setup", aws_secret_access_key="setup")
    s3, iam = boto3.client("s3", **kw), boto3.client("iam", **kw)
    out = {"endpoint": endpoint, "buckets": ROLES}
    for role, bucket in ROLES.items():
        s3.create_bucket(Bucket=bucket)
        iam.create_user(UserName=role)
        policy = {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Action": "s3:*",
            "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}]}
        iam.put_user_policy(UserName=role, PolicyName="own-bucket", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=role)["AccessKey"]
        out[role] = {"key": key["AccessKeyId"], "secret": key["SecretAccessKey"]}
    if "--auth" in sys.argv:
        # moto's verifier rejects some valid signatures (%2F in query values, non-ASCII keys):
        # only the credential tests use this server.
        req = urllib.request.Request(endpoint + "/moto-api/reset-auth", data=b"0",
                                     headers={"Content-Type": "text/plain"}, method="POST")
        urllib.request.urlopen(req).read()
    print(json.dumps(out), flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
