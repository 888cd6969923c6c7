"""The PySpark pipeline: experiment sweeps and bulk trace checks on Spark.

* :mod:`~snapshotlib.spark.session`: a quiet SparkSession (``local[*]`` or a cluster);
* :mod:`~snapshotlib.spark.sweep`: a sweep's executions as Spark tasks, rows written as
  Parquet, a summary per grid cell;
* :mod:`~snapshotlib.spark.traces`: recorded executions (JSON Lines) checked in bulk;
* :mod:`~snapshotlib.spark.output`: the Parquet and CSV files, through Arrow;
* :mod:`~snapshotlib.spark.anywhere`: a sweep on Spark when it starts here, else in
  this process.

Needs the ``spark`` extra (pyspark, pyarrow) and a Java 17 runtime. Importing this
package imports neither; each module imports pyspark only where it talks to Spark.
What runs inside the tasks is the standard-library core (:mod:`snapshotlib.sweeps`).
"""
