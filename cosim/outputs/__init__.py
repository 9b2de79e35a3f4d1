"""What commands write: the output-safety rule and run folders, atomic writes, Arrow
tables, Perfetto timelines and GTKWave save files."""
