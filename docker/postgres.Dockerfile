# PostgreSQL from Debian's packages on the locally built base image (nothing is pulled).
ARG BASE_IMAGE=envfactory/compose-base:latest
FROM ${BASE_IMAGE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        postgresql postgresql-client gosu && rm -rf /var/lib/apt/lists/*
COPY docker/postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
RUN chmod 755 /usr/local/bin/postgres-entrypoint.sh
ENV PGDATA=/var/lib/postgresql/data
EXPOSE 5432
CMD ["/usr/local/bin/postgres-entrypoint.sh"]
