# envfactory worker / API image, built locally on top of the locally built base image
# (no registry): `docker/build-images.sh` makes BASE_IMAGE first.
ARG BASE_IMAGE=envfactory/compose-base:latest
FROM ${BASE_IMAGE}
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 ENVFACTORY_HOME=/data
WORKDIR /src
COPY pyproject.toml ./
# dependencies first, in their own layer: a source change rebuilds only the last one
RUN python3 -c "import tomllib; print('\\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/deps.txt \
    && python3 -m pip install --no-cache-dir -r /tmp/deps.txt && rm /tmp/deps.txt
COPY README.md ./
COPY envfactory ./envfactory
COPY workflows ./workflows
COPY sandboxes ./sandboxes
COPY verifiers ./verifiers
COPY migrations ./migrations
COPY examples ./examples
RUN python3 -m pip install --no-cache-dir --no-deps . && mkdir -p /data
CMD ["envfactory", "worker"]
