# syntax=docker/dockerfile:1
# karpenter-guard: a static binary on distroless, running as the nonroot user (65532).
#   docker build --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse HEAD) -t karpenter-guard .
# Releases build their image from GoReleaser's binaries instead: Dockerfile.goreleaser, kept in step.
FROM golang:1.26 AS build
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/karpenter-guard ./cmd/karpenter-guard

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/karpenter-guard /karpenter-guard
USER 65532:65532
ENTRYPOINT ["/karpenter-guard"]
CMD ["serve"]
