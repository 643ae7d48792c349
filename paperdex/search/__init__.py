"""The search stage: the query language (`query`), what a search reads on any backend
(`corpus`), the one engine that ranks (`engine`: plan, matched set, fusion, highlighting) and
the metrics of `paperdex eval` (`evaluate`)."""
