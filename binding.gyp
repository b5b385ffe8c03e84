{
  "targets": [
    {
      "target_name": "malloc_trim",
      "sources": ["native/malloc-trim.c"]
    }
  ]
}
