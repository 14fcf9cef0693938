"""GPUs: the pool of devices that notebooks, training jobs and competition runs take
from, and the admin's router for GPU types and devices."""
