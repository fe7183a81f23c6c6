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
