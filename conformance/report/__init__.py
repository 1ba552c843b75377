"""The report: its typed lines, the writer, the reader, and the formats derived from it."""
