# campfire-room as a container: build the static binary, then ship it alone.
# The final image holds one file (the binary, with every asset embedded) and a /data volume.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN make

FROM scratch
COPY --from=build /src/campfire-room /campfire-room
VOLUME /data
ENV STORAGE_PATH=/data DATABASE_PATH=/data/db/production.sqlite3 PORT=3000
EXPOSE 3000
STOPSIGNAL SIGTERM
ENTRYPOINT ["/campfire-room"]
