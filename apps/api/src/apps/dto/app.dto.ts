import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { APP_NAME, IsAppName, TIMER_ID, toTimerId } from '../../common/validators';
import { Envelope } from '../../common/envelope';

export class AppNameDto {
  @ApiProperty({ example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;
}

export class IssueTokenDto extends AppNameDto {
  @ApiPropertyOptional({ example: 'ci deploy', maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  @Matches(/^[^\x00-\x1f\x7f]*$/, { message: 'label must not contain control characters' })
  label?: string;
}

export class RevokeTokenDto extends AppNameDto {
  @ApiProperty({ example: 7, description: 'id returned when the token was issued' })
  @Transform(toTimerId)
  @IsString({ message: 'tokenId must be a positive integer' })
  @Matches(TIMER_ID, { message: 'tokenId must be a positive integer' })
  tokenId!: string;
}

export class AppView {
  @ApiProperty({ example: 'billing' })
  app!: string;
}

export class AppResponse extends Envelope {
  @ApiProperty({ type: AppView })
  data!: AppView;
}

export class IssuedToken {
  @ApiProperty({ example: 7 })
  id!: number;

  @ApiProperty({ description: 'the bearer token; shown only this once (only its hash is stored)' })
  token!: string;
}

export class TokenResponse extends Envelope {
  @ApiProperty({ type: IssuedToken })
  data!: IssuedToken;
}

export class SecretView {
  @ApiProperty({ description: 'new signing secret for X-Timer-Signature; shown only this once' })
  secret!: string;
}

export class SecretResponse extends Envelope {
  @ApiProperty({ type: SecretView })
  data!: SecretView;
}

export class PauseView {
  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ description: 'false when the app already was in the state asked for (nothing was written)' })
  changed!: boolean;

  @ApiProperty({ description: 'whether the app is paused now' })
  paused!: boolean;

  @ApiProperty({ type: Number, nullable: true, example: 1767225600000, description: 'start of the latest pause (epoch ms); fires from then on are not delivered' })
  pausedAt!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 1767229202000,
    description: 'end of the latest pause (epoch ms): the resume answer + 2 s; fires before it are recorded missed, fires from it on are delivered. Null while paused',
  })
  resumedAt!: number | null;

  @ApiProperty({ example: 3, description: 'resume: pending fires of the paused interval this request recorded missed (reason `paused`); the reconciler records the earlier ones during the pause. 0 for pause' })
  missedFires!: number;
}

export class PauseResponse extends Envelope {
  @ApiProperty({ type: PauseView })
  data!: PauseView;
}
