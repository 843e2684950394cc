# Build: a static binary from the module, no cgo.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/pmapi/pmapi/observability.Version=${VERSION}" \
      -o /out/pmapi ./cmd/pmapi

# Run: distroless, non-root, nothing but the binary and CA certificates.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/pmapi /pmapi
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/pmapi"]
CMD ["serve"]
