"""Engines behind the backend seam other than the in-memory index (Milvus, Ray ingestion)."""
