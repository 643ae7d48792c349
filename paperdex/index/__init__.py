"""The index stage: what a writer builds from the store and publishes for readers. The lexical
snapshot (BM25F arrays, `lexical`), the vectors (`vectors`) and the models that make them
(`embed`), published safely by one writer at a time (`snapshots`)."""
