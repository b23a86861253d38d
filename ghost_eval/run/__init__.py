"""What a run is and leaves behind, as typed records: who ran what with which prompt (`identity`), its audit lines,
result and summary (`artifacts`), and the infrastructure as it was when the agent started (`snapshot`)."""
