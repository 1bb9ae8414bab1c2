-- Run once by the postgres image on an empty data volume (docker-compose.yml mounts this file into
-- /docker-entrypoint-initdb.d/). Each database-owning service has its own database.
CREATE DATABASE svc_hub;
CREATE DATABASE svc_workflow;
