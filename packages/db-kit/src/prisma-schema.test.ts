import { expectedModelsFromPrismaSchema } from './prisma-schema';

const schema = `
enum Role {
  a
  b
}

model Team {
  id      String   @id
  name    String?  // comment
  tags    String[]
  role    Role     @default(a)
  at      DateTime @default(now()) @map("created_at") @db.Timestamptz(3)
  members Member[]

  @@map("teams")
}

model Member {
  id     String @id
  teamId String @map("team_id")
  team   Team   @relation(fields: [teamId], references: [id])
}

model Hidden {
  id String @id
  @@ignore
}
`;

describe('Prisma schema reading', () => {
  test('when a schema maps tables and columns, then the expected columns use the mapped names and db types', () => {
    expect(expectedModelsFromPrismaSchema(schema)).toEqual([
      {
        table: 'teams',
        columns: [
          { name: 'id', nullable: false, dbType: 'text' },
          { name: 'name', nullable: true, dbType: 'text' },
          { name: 'tags', nullable: true, dbType: 'text[]' },
          { name: 'role', nullable: false, dbType: 'Role' },
          { name: 'created_at', nullable: false, dbType: 'timestamp with time zone' },
        ],
      },
      {
        table: 'Member',
        columns: [
          { name: 'id', nullable: false, dbType: 'text' },
          { name: 'team_id', nullable: false, dbType: 'text' },
        ],
      },
    ]);
  });
});
