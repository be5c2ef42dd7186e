"""OpenTelemetry export of schemawire traces (extra ``otel``): docs/otel.md."""
